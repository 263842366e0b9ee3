"""CSV export: the export tables (`tables`) and the zip of them (`bundle`). They read query
only."""
