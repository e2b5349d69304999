package spaces

import (
	"errors"
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
