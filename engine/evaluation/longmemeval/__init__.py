"""LongMemEval harness (`hymem eval longmemeval`): each question is its own user with its own
history; retrieval is scored with the benchmark's own metrics beside its flat baselines, and QA
is judged per question type when a model is configured.

    data      the file format, read strictly (`parse_lme_date`, skips counted, not fatal)
    metrics   recall_any / recall_all / NDCG@k and the turn->session conversion (pure)
    flat      the paper's flat baselines: BM25, dense, hybrid over user turns and sessions
    systems   hymem's summary and segment retrieval, the baselines, and the QA answerers
    ingest    one add() per session, then flush
    judge     the per-type judge prompts
    records   retrieval.jsonl and predictions.jsonl rows
    runner    ingest -> rank -> (answer -> judge), resumable (`run_longmemeval`)
    report    summary.json and report.md (pure)

Nothing is imported here, so importing a submodule stays cheap.
"""
