"""Reading results, never simulating: tables (Rich and CSV) and plots of the results documents
:mod:`ndpsim.experiments` produces, every paper's drawn the same way from its data."""
