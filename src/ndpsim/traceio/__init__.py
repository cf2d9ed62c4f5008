"""Reading and writing memory traces in other tools' formats."""
