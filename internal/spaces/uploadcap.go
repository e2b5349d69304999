package spaces

import (
	"errors"
	"fmt"
)

// Uploads going at once per person. Reading and chunking a file holds
// it, its text and its chunks in memory: one account sending many large
// files at once could run the server out of memory. Each person's adds
// beyond the cap are refused at once (the client sends them again later)
// rather than queued with their files held.

// DefaultUploadsPerPerson is Config.UploadsPerPerson's default.
const DefaultUploadsPerPerson = 2

// ErrUploadsBusy refuses an add while the person's others are going.
var ErrUploadsBusy = errors.New("too many uploads of yours are being read")

// holdUpload takes one of the person's upload places, or refuses.
func (s *Service) holdUpload(userID string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uploads[userID] >= s.cfg.UploadsPerPerson {
		return nil, fmt.Errorf("%w: %d at once; send this one when one has finished", ErrUploadsBusy, s.cfg.UploadsPerPerson)
	}
	s.uploads[userID]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.uploads[userID]--; s.uploads[userID] <= 0 {
			delete(s.uploads, userID)
		}
	}, nil
}
