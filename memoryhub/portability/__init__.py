"""Moving memory in and out: the archive (export, import) and foreign formats (ChatGPT,
Claude, Mem0). Above every kind it reads and writes, beside backups (.importlinter)."""
