"""What goes out: the weekly schedule, merged-PR notices, a post on demand."""
