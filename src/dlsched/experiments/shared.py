"""The reference data folder's location, by the name experiment modules import it as.

It is found by ``dlsched.shared_data`` (``--data DIR``, ``$DLSCHED_DATA``, else ../shared or
./shared from the working directory), never from where the package is installed.
"""

from dlsched.shared_data import shared_dir

__all__ = ["shared_dir"]
