"""A Dask client: on an existing scheduler, or on an embedded ``LocalCluster``."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def dask_client(scheduler: str | None, workers: int | None):
    """A ``dask.distributed.Client`` on ``scheduler`` (an address) or on a
    ``LocalCluster`` of ``workers`` one-thread processes, closed on exit
    (an embedded cluster with it)."""
    from dask.distributed import Client, LocalCluster

    if scheduler is not None:
        client, cluster = Client(scheduler), None
    else:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
        client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
