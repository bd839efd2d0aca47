"""A Dask client: on an existing scheduler, or on an embedded ``LocalCluster``."""

from __future__ import annotations

from contextlib import contextmanager

CONNECT_TIMEOUT = "5s"  # an unreachable address fails fast, before any evaluation


@contextmanager
def dask_client(scheduler: str | None, workers: int | None):
    """A ``dask.distributed.Client`` on ``scheduler`` (an address) or on a
    ``LocalCluster`` of ``workers`` one-thread processes, closed on exit
    (an embedded cluster with it)."""
    from dask.distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client, cluster = Client(scheduler, timeout=CONNECT_TIMEOUT), None
        except (OSError, TimeoutError, ValueError) as err:
            raise ConnectionError(
                f"scheduler={scheduler!r}: no Dask scheduler answered there within "
                f"{CONNECT_TIMEOUT} ({type(err).__name__}: {err})"
            ) from err
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
