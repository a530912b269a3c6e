package workspace

// NewSnapshot returns a Snapshot of text that is not an open document —
// a file read from disk — so that its positions can be mapped like an open
// document's. Seq is zero and Edited the zero time.
func NewSnapshot(uri URI, languageID string, version int32, text string) *Snapshot {
	return (&Snapshot{URI: uri, LanguageID: languageID, Version: version}).withText(text, defaultShape)
}
