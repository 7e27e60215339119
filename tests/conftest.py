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

# What `daimyo validate` found is kept as well (engine/model/verdicts.py), named by the files and
# the engine's sources. A test that changes the engine in this process (monkeypatch) would be
# given what the unchanged engine found: in the test process it is off, except where a test turns
# it on (tests/test_validate_cache.py, tests/test_validate_output.py). Subprocesses keep it on.
from engine.model import verdicts  # noqa: E402

verdicts._CACHE[:] = [None]
