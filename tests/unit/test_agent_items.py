"""Which OpenAI Agents SDK items become hymem turns (`hymem.adapters.openai_agents`)."""

from __future__ import annotations

from hymem.adapters.openai_agents import message_turns


def test_messages_become_turns_and_tool_traffic_does_not() -> None:
    items = [
        {"role": "user", "content": "Hi, I'm Ana."},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "x"},
        {"type": "reasoning", "id": "r", "summary": []},
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "input_text", "text": "I live in Faro."}]},
        {"role": "assistant", "content": "   "},
    ]
    assert message_turns(items) == [
        {"role": "user", "content": "Hi, I'm Ana."},
        {"role": "user", "content": "I live in Faro."},
    ]


def test_assistant_messages_sharing_the_sdks_placeholder_id_are_all_kept() -> None:
    # The chat-completions path gives every output item the id "__fake_id__": taken as turn
    # ids, the second message would be a repeat of the first and silently skipped by add().
    items = [
        {
            "id": "__fake_id__",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "First answer."}],
        },
        {
            "id": "__fake_id__",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Second answer."}],
        },
    ]
    turns = message_turns(items)
    assert [t["content"] for t in turns] == ["First answer.", "Second answer."]
    assert all("id" not in t for t in turns)
