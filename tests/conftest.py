"""Test session set-up shared by every test file."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

# Parsed rule texts and located YAML are cached in the user's cache folder (docs/performance.md).
# The tests compile and read thousands of throw-away texts (fuzzing, broken rulesets): keep them
# in a folder of this session, removed at its end, not in the user's cache. Subprocesses inherit it.
_CACHE = tempfile.mkdtemp(prefix="daimyo-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)
