"""Large models at the Crius sizes (Table 2): built by size variant.  Filled in by the Crius work."""
