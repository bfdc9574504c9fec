"""A memory on an object store (s3://, gs://, az://) shared by many workers: conditional
objects, per-user write leases, commit journals as objects, the worker's lexical replica feed
and the opener that assembles a `Store` from those parts."""
