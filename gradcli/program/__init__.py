"""Running a user's file as python would, for every command, and reading what it made: the names
it gave tensors, the lines that made them, the modules whose forward was running."""
