"""Paper reproductions callable from the package (``dlsched reproduce NAME``); see ``registry``."""
