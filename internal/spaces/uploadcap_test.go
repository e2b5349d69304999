package spaces

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// One person's adds beyond the cap are refused while theirs go on; another
// person's are not, and the place comes back when an add ends.
func TestUploadsPerPersonCapped(t *testing.T) {
	e := newEnv(t, Config{UploadsPerPerson: 2}, nil, nil)
	sp := e.space(t, "notes")
	reading, release := make(chan struct{}, 2), make(chan struct{})
	var wg sync.WaitGroup
	for _, name := range []string{"a.md", "b.md"} {
		wg.Go(func() {
			_, err := e.svc.Add(t.Context(), user, sp.ID, []File{BytesFile(name, []byte("# "+name+"\n\nsome text"))}, AddOptions{OnRead: func(string) {
				reading <- struct{}{}
				<-release
			}})
			if err != nil {
				t.Errorf("add %s: %v", name, err)
			}
		})
	}
	<-reading
	<-reading
	if _, err := e.svc.Add(t.Context(), user, sp.ID, []File{BytesFile("c.md", []byte("# c\n\ntext"))}, AddOptions{}); !errors.Is(err, ErrUploadsBusy) {
		t.Errorf("a third add at once: %v, want ErrUploadsBusy", err)
	}
	other, err := e.svc.CreateSpace(t.Context(), "u2", "theirs", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Add(t.Context(), "u2", other.ID, []File{BytesFile("d.md", []byte("# d\n\ntext"))}, AddOptions{}); err != nil {
		t.Errorf("another person's add: %v", err)
	}
	close(release)
	wg.Wait()
	if res := e.add(t, sp.ID, BytesFile("c.md", []byte("# c\n\ntext"))); res[0].Status != StatusAdded {
		t.Errorf("the add after: %+v", res[0])
	}
}

// An HTML file longer than the page reader takes is added in part and
// says so: its document carries a notice (shown in the upload's answer
// and the space's list); a short one carries none.
func TestCutDocumentSaysSo(t *testing.T) {
	e := newEnv(t, Config{}, nil, nil)
	sp := e.space(t, "cut")
	var long strings.Builder
	long.WriteString("<html><head><title>Long</title></head><body><article>")
	for i := 0; long.Len() < 600_000; i++ {
		fmt.Fprintf(&long, "<p>Paragraph %d of the long report tells of the budget and of the harbour works in detail.</p>\n", i)
	}
	long.WriteString("</article></body></html>")
	res := e.add(t, sp.ID,
		BytesFile("long.html", []byte(long.String())),
		BytesFile("short.html", []byte("<html><body><article><p>The harbour opened in June after the works on the pier.</p></article></body></html>")))
	for _, r := range res {
		if r.Status != StatusAdded {
			t.Fatalf("%s: %s %s", r.Name, r.Status, r.Error)
		}
	}
	if n := res[0].Document.Notice; !strings.Contains(n, "only the beginning") {
		t.Errorf("the cut document's notice = %q", n)
	}
	if n := res[1].Document.Notice; n != "" {
		t.Errorf("the whole document's notice = %q, want none", n)
	}
	docs, err := e.svc.Documents(t.Context(), user, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if (d.Name == "long.html") != (d.Notice != "") {
			t.Errorf("stored %s: notice %q", d.Name, d.Notice)
		}
	}
}
