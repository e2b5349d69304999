package store

import "testing"

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, sqlite, postgres string }{
		{`SELECT 1`, `SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c IN (?, ?)`, `SELECT a FROM t WHERE b = ? AND c IN (?, ?)`, `SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)`},
		{`VALUES (?,?,?),(?,?,?),(?,?,?),(?)`, `VALUES (?,?,?),(?,?,?),(?,?,?),(?)`, `VALUES ($1,$2,$3),($4,$5,$6),($7,$8,$9),($10)`},
	} {
		if got := sqliteDialect.rebind(tc.in); got != tc.sqlite {
			t.Errorf("sqlite rebind(%q) = %q", tc.in, got)
		}
		if got := postgresDialect.rebind(tc.in); got != tc.postgres {
			t.Errorf("postgres rebind(%q) = %q", tc.in, got)
		}
	}
}
