"""Storage: where hymem keeps memories, and nothing about how they are searched or answered.

Small ports, one Protocol per concern (`ports/`), with every kind of store behind them,
assembled by `open.py`:

    ports/             the ports (turns, records, dense and lexical search, commits, traces,
                       the sleep journal, admin) and `Storage`, their sum
    protocol.py        the ports' shared vocabulary: `RowScope`, row and vector types
    open.py            the one factory: a folder, an object-store URI or an in-memory twin
    location.py        where a store lives (folder or s3/gs/az URI) and its cache slot
    paging.py, keys.py, filter_compile.py   pure helpers every store shares
    store/             the persistent `Store` and the parts both kinds share: commits and their
                       journals, recovery, repair, erasure, maintenance, fault mapping, reads
    folder/            a folder store: its writer lock, meta.json, doctor and opener
    objects/           an object store: conditional objects, leases, commit journals, the
                       lexical replica feed and its opener
    lance/             LanceDB tables: schema, migrations, SQL fragments, per-table helpers
    lexical/           the Tantivy index, its analyzer, its sync record and its replica
    dense/             the in-memory exact dense index in front of LanceDB
    memory/            the in-memory twin (dicts and numpy), for fast tests

Layering (enforced by tests/unit/test_layers.py): storage imports from the engine only its
shared vocabulary (`hymem.core.types`, `hymem.core.errors`, `hymem.core.time`, `hymem.core.logging`,
`hymem.core.filters`, `hymem.core.metadata`); retrieval (`hymem.search`) sits above it.
"""
