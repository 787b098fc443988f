"""What every command's output is made of: consoles, JSON data, text blocks, the error document,
and where a report goes (stdout or -o FILE). Each command renders its own report in its package."""
