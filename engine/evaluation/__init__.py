"""Evaluation harnesses (LoCoMo here, LongMemEval in `longmemeval/`) and the dashboard.

    locomo_data     the old name of `hymem.backfill.locomo`, which loads the benchmark file
                    (annotations are never loaded)
    metrics         LoCoMo-style F1 / BLEU-1, evidence recall, percentiles, aggregation (pure)
    systems         hymem and its ablations through Memory.ask; baselines in `baselines`;
                    `lineup` builds them by name
    runner          ingest -> ask -> score, resumable (`run_locomo`, `RunOptions`); which
                    conversations and questions it asks is `questions`
    predictions     predictions.jsonl (and other keyed JSONL logs), appended per finished item
    pool            answering questions concurrently, a bounded number in flight
    report          summary.json and the Table-1-shaped report.md (pure)
    retrieval_eval  evidence recall@k of hybrid vs dense vs BM25 retrieval
    retrieval_cache its per-question results, reused by a rerun while config and store agree
    timing          seconds per stage of each invocation (timing.jsonl, the report's table)
    manifest        versions, config, prompt versions, dataset hash, git commit
    errors          DatasetFormatError: a benchmark file not in its format (a UserInputError)
    dashboard       the self-contained HTML page; its numbers live in `dashboard_data`, its
                    charts in `dashboard_figures` (only those with data), its tables in
                    `dashboard_tables` (key numbers; each run's retrieval tables from its report)

Nothing is imported here, so `import hymem.evaluation.metrics` stays cheap.
"""
