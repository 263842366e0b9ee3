"""CSV export: the export tables (`tables`), the columns that let them be read alone
(`readable`), the data dictionary of their columns (`dictionary`) and the zip of them
(`bundle`). They read query only."""
