"""The dashboard's words: each chart's title and a one-line note on how to read it, and a
glossary of the terms the charts and the key numbers use ("escalation", "light path", "model
tokens"...), which a reader who has not read the design would otherwise have to guess. The
titles are HTML headings above each chart, not plotly titles: plotly's mode bar sits over the top
of the figure and hid long titles."""

from __future__ import annotations

import html

CHART_TITLES: dict[str, str] = {
    "chart-escalation-overall": "Escalation rate overall",
    "chart-escalation-category": "Escalation rate by question category",
    "chart-escalation-iteration": "Escalation rate by reflection round",
    "chart-escalation-order": "Escalation rate by question order (rolling windows)",
    "chart-tokens": "Tokens per question (model or extractive backend), by path",
    "chart-latency": "Latency per question (ms), by path",
    "chart-accuracy-path": "Light-path vs deep-path accuracy",
    "chart-runs": "Evaluation runs side by side (answer scores)",
    "chart-retrieval": "Retrieval: evidence recall@k",
}
CHART_IDS = tuple(CHART_TITLES)

CHART_NOTES: dict[str, str] = {
    "chart-escalation-overall": "Share of questions that went on to the deep path; only systems "
    "with both paths (hymem and its ablations) have one.",
    "chart-escalation-category": "The same share within each question category.",
    "chart-escalation-iteration": "Of the asks that reached round i, the share whose round i "
    "escalated (from the answers' traces).",
    "chart-escalation-order": "The share over consecutive windows of questions, in dataset "
    "order (a store's traces: order of arrival): does escalation drift along the run?",
    "chart-tokens": "One box per source and path: the spread of tokens one question cost.",
    "chart-latency": "One box per source and path: the spread of one question's wall time.",
    "chart-accuracy-path": "Mean F1 (LoCoMo) or judge accuracy (LongMemEval) of the answers "
    "that ended on each path: is escalating worth it?",
    "chart-runs": "Overall F1 per system (LoCoMo) or judge accuracy per QA system "
    "(LongMemEval), one bar per run and system.",
    "chart-retrieval": "Retrieval alone, no model: the share of the gold evidence found in the "
    "top k, one panel per level of the memory.",
}

GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "Light path",
        "hymem answers from a few retrieved summaries (the short Level-1 memories) in one answer "
        "call. Most questions should end here: it is the cheap path.",
    ),
    (
        "Escalation, deep path",
        "When the light path reports that its context is incomplete, hymem escalates: a model "
        "selects the relevant memories, reads their raw dialogue segments (Level-2) and answers "
        "from those. Escalation rate is the share of questions that took the deep path; "
        "light-only never escalates, deep-only always does.",
    ),
    (
        "Reflection round",
        "On the deep path, after each answer a reflection call says whether it is complete or "
        "rewrites the question for another round, up to the configured number of rounds.",
    ),
    (
        "No path (baselines)",
        "full-context and naive-rag-kN answer in one call with no light/deep split, so they "
        "have no escalation rate.",
    ),
    (
        "Model tokens",
        "Prompt plus completion tokens of every model call one question made, all roles "
        "together. The extractive backend calls no model: its tokens count the text it read "
        "and wrote (extractive tokens), a measure of context size, not of money spent.",
    ),
    (
        "Fallback",
        "When a model role's reply is still invalid after its repair attempts, hymem uses that "
        "role's typed fallback instead of failing (a failed light verdict escalates, a failed "
        "deep answer falls back to the light answer); such an answer is flagged in its trace "
        "and never counted complete.",
    ),
    (
        "recall@k",
        "LoCoMo: the share of a question's gold evidence turns found among the top k retrieved "
        "items, each hit mapped to the dialogue turns behind it. LongMemEval (recall_any@k): "
        "whether any evidence session or turn is in the top k. Averaged over the questions.",
    ),
)


def glossary_html() -> str:
    """The glossary as a definition list, shown just above the charts."""
    items = "".join(
        f"<dt>{html.escape(term)}</dt><dd>{html.escape(text)}</dd>" for term, text in GLOSSARY
    )
    return f"<section id='glossary'><h2>Reading the charts</h2><dl>{items}</dl></section>"


__all__ = ["CHART_IDS", "CHART_NOTES", "CHART_TITLES", "GLOSSARY", "glossary_html"]
