package assist

// ParseFindings is parseFindings for the tests, with cut counted in
// dropped: the findings past the first MiB of an over-size answer.
func ParseFindings(text string, lines, max int) (out []Finding, dropped int, err error) {
	out, dropped, cut, err := parseFindings(text, lines, max)
	return out, dropped + cut, err
}
