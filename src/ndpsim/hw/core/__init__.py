"""Processing cores: the contract every kind implements and its registry (:mod:`.contract`),
the compiled SIMT SM the shipped kinds run on (:mod:`.sm`), and one module per kind."""
