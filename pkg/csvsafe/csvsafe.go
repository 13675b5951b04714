// Package csvsafe writes CSV files that a spreadsheet opens as data: a cell
// it would read as a formula is written as text.
package csvsafe

import (
	"encoding/csv"
	"io"
	"regexp"
)

// number is a cell a spreadsheet reads as a number whether or not it is
// a formula ("-3600", a Release expired an hour ago): it stays a number.
var number = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?$`)

// Cell is s as a spreadsheet shows it as text: a cell that starts with
// =, +, -, @, a tab or a carriage return (OWASP's CSV injection list: a
// spreadsheet runs it as a formula, and =HYPERLINK leaks the sheet,
// =cmd|... runs a program) gets an apostrophe first, which spreadsheets
// read as "text" and scripts can strip; nothing of s is lost.
func Cell(s string) string {
	if s == "" || number.MatchString(s) {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// Writer is a csv.Writer whose records go through Cell.
type Writer struct{ *csv.Writer }

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{csv.NewWriter(w)} }

// Write writes one record, its cells through Cell.
func (w *Writer) Write(record []string) error {
	safe := make([]string, len(record))
	for i, c := range record {
		safe[i] = Cell(c)
	}
	return w.Writer.Write(safe)
}

// WriteAll writes the records, their cells through Cell, and flushes.
func (w *Writer) WriteAll(records [][]string) error {
	for _, r := range records {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}
