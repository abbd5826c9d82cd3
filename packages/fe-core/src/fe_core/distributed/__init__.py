"""Data-parallel training support that needs no framework: the communicator, sample sharding, cross-rank reductions
and per-rank checkpoint state. The backends (`fe_torch.distributed`, `fe_tf.distribute`) install a communicator
built on their own collectives when a launcher started the process."""
from fe_core.distributed.communicator import (Communicator, LocalCommunicator, get_communicator, is_main_process,
                                              launcher_env, set_communicator)
from fe_core.distributed.reduce import all_gather_arrays, batch_scalar_means, gather_stats, weighted_means
from fe_core.distributed.sharding import check_batch_size, epoch_order_rng, global_batches, rank_part, rank_span

__all__ = ["Communicator", "LocalCommunicator", "get_communicator", "set_communicator", "is_main_process",
           "launcher_env", "all_gather_arrays", "batch_scalar_means", "gather_stats", "weighted_means",
           "epoch_order_rng", "global_batches", "rank_part", "rank_span", "check_batch_size"]
