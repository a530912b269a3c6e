package tools

// Definitions returns the tool definitions, always in the same order.
func Definitions() []Definition { return append([]Definition(nil), definitions()...) }
