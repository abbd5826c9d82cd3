"""The checkpoint format: a directory of JSON, numpy arrays and the frameworks' own model files, written atomically.

`System.save_state` / `System.load_state` use it. A checkpoint never depends on pickling arbitrary objects: state
is encoded by `StateCodec` into JSON plus an `.npz` file read with `allow_pickle=False`, decoding admits only a fixed
allowlist of types (and the `StateReducer`s of loaded backends), and there is no unrestricted pickle anywhere, so
loading a checkpoint never imports or calls anything it names. Every file is listed in `system.json` with its size
and sha256 (taken from the bytes its writer meant to write, see `hashed_file`) and verified before anything is
decoded.
"""
from fe_core.checkpoint.atomic_dir import atomic_directory, backup_path, find_directory
from fe_core.checkpoint.checkpoint_dir import (FORMAT_NAME, FORMAT_VERSION, Checkpoint, SavedModel, is_checkpoint,
                                               read_checkpoint, read_manifest, verify_file, write_checkpoint)
from fe_core.checkpoint.model_restore import restore_models
from fe_core.checkpoint.codec import CheckpointDecodeError, CheckpointEncodeError, StateCodec
from fe_core.checkpoint.hashed_file import HashingWriter, WrittenFile, write_hashed_file
from fe_core.checkpoint.object_state import (check_object_states, get_object_state, get_object_states,
                                             set_object_state, set_object_states, stateful_objects)
from fe_core.checkpoint.rng_state import capture_rng_state, restore_rng_state

__all__ = ["atomic_directory", "backup_path", "find_directory", "FORMAT_NAME", "FORMAT_VERSION", "Checkpoint",
           "SavedModel", "is_checkpoint", "read_checkpoint", "read_manifest", "verify_file", "restore_models",
           "write_checkpoint", "CheckpointDecodeError",
           "CheckpointEncodeError", "StateCodec", "get_object_state", "set_object_state", "stateful_objects",
           "get_object_states", "check_object_states", "set_object_states", "capture_rng_state", "restore_rng_state",
           "HashingWriter", "WrittenFile", "write_hashed_file"]
