"""The persistent `Store` both kinds assemble, and the parts they share: journaled commits,
recovery and repair, erasure, compaction and index maintenance, storage-fault mapping."""
