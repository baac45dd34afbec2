"""Runs too large or too remote to read whole: submission files planned in pieces that read
their own rows (``--chunk-rows``, Parquet), graded here or on Dask (``--engine dask``), each
piece's rows written to part files that the run joins into its tables."""
