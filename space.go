package sova

import (
	"context"
	"time"
)

// Space is a named collection of a user's documents. The counts are
// computed when a space is read and ignored when one is written.
type Space struct {
	ID            string    `json:"id"`
	UserID        string    `json:"userId"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	DocumentCount int       `json:"documentCount"`
	ChunkCount    int       `json:"chunkCount"`
	TotalBytes    int64     `json:"totalBytes"`
}

// Document is the metadata of one document of a space: its text is in the
// search index. Name is unique within the space (a file name or a path
// relative to the folder it was added from). Version names the ingestion
// whose chunks the index holds for the document.
type Document struct {
	ID         string `json:"id"`
	SpaceID    string `json:"spaceId"`
	Name       string `json:"name"`
	Title      string `json:"title,omitempty"`
	Format     string `json:"format"`
	Size       int64  `json:"size"`
	SHA256     string `json:"sha256"`
	ChunkCount int    `json:"chunkCount"`
	Version    string `json:"version"`
	// Notice says what of the file was left out when only part of it
	// could be read (a limit cut it); empty when it was read whole.
	Notice    string    `json:"notice,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// SpaceName is filled in by LookupDocuments only.
	SpaceName string `json:"spaceName,omitempty"`
}

// MaxSpaceNameChars bounds a space's name; MaxDocumentNameChars a
// document's.
const (
	MaxSpaceNameChars    = 200
	MaxDocumentNameChars = 1024
)

// SpaceStore keeps spaces and their documents' metadata. Every method is
// scoped by user: a space of another user is ErrNotFound.
//
// PutDocuments and DeleteDocuments take a function that runs inside the
// transaction after the rows are written and before the commit, with the
// rows as they were: the caller checks them against its search index (or
// changes the index) there, and an error from it rolls the rows back.
type SpaceStore interface {
	// CreateSpace saves a new space. An empty ID is generated; zero times
	// default to now. A name the user already has is ErrConflict.
	CreateSpace(ctx context.Context, s *Space) error
	// GetSpace returns one of the user's spaces with its counts.
	GetSpace(ctx context.Context, userID, spaceID string) (*Space, error)
	// GetSpaceByName returns the user's space with this exact name.
	GetSpaceByName(ctx context.Context, userID, name string) (*Space, error)
	// ListSpaces returns the user's spaces by name, with counts; never nil.
	ListSpaces(ctx context.Context, userID string) ([]Space, error)
	// UpdateSpace renames a space and sets its description. A name the
	// user already has for another space is ErrConflict.
	UpdateSpace(ctx context.Context, userID, spaceID, name, description string) error
	// DeleteSpace deletes a space and its documents' rows.
	DeleteSpace(ctx context.Context, userID, spaceID string) error
	// ListDocuments returns the documents of one of the user's spaces by
	// name; never nil.
	ListDocuments(ctx context.Context, userID, spaceID string) ([]Document, error)
	// GetDocument returns one document of one of the user's spaces.
	GetDocument(ctx context.Context, userID, spaceID, docID string) (*Document, error)
	// PutDocuments inserts documents or, where the space already has one
	// of the same name, replaces that one's metadata and keeps its ID and
	// CreatedAt. IDs and times are written back into docs. apply receives
	// the rows as they were before, for the documents that existed.
	PutDocuments(ctx context.Context, userID, spaceID string, docs []*Document, apply func(replaced []Document) error) error
	// DeleteDocuments deletes documents of one of the user's spaces. An ID
	// the space does not hold is ErrNotFound. apply receives the deleted rows.
	DeleteDocuments(ctx context.Context, userID, spaceID string, docIDs []string, apply func(deleted []Document) error) error
	// LookupDocuments returns those of the given documents that belong to
	// the user's spaces, in no particular order, with SpaceName set.
	// Unknown IDs are left out. The result is never nil.
	LookupDocuments(ctx context.Context, userID string, docIDs []string) ([]Document, error)
	// ForgetDocumentContent clears the checksum of documents whose chunks
	// the index lost, so that adding the same file again re-reads it.
	ForgetDocumentContent(ctx context.Context, userID, spaceID string, docIDs []string) error
}
