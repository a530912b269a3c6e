package assist

// ParseFindings is parseFindings for the tests, with cut counted in
// dropped: the findings past the first MiB of an over-size answer.
func ParseFindings(text string, lines, max int) (out []Finding, dropped int, err error) {
	out, dropped, cut, err := parseFindings(text, lines, max)
	return out, dropped + cut, err
}

// BuildPrompt lays out t's prompt in the engine's prompt cache, as a run
// does before it sends (taskRun.buildPrompt), without sending it.
func (e *Engine) BuildPrompt(t *Task) error {
	if err := e.setup(); err != nil {
		return err
	}
	r := &taskRun{e: e, cfg: e.Config(), t: t, instruction: instructionFor(t.Action, t)}
	_, err := r.buildPrompt()
	return err
}
