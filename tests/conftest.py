"""Setup shared by every suite (core, torch, tf, fe).

fe records every fit/test in a run-history database (`~/fastestimator_data/history.db` by default). Tests must not
write into the user's real history: for the whole session it goes to a temporary file (tests that check the history
point FE_HISTORY_DB elsewhere themselves).
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

_HISTORY_DIR = tempfile.mkdtemp(prefix="fe-test-history-")
os.environ["FE_HISTORY_DB"] = os.path.join(_HISTORY_DIR, "history.db")
atexit.register(shutil.rmtree, _HISTORY_DIR, True)
