package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
)

// Names of the memory group's tools (seed 000 §1.2, §4.3).
const (
	SearchMemoriesName = "search_memories"
	AddMemoryName      = "add_memory"
)

// Memories keeps and finds a person's memories (*memory.Builtin or
// *memory.Supermemory).
type Memories interface {
	Name() string
	Add(ctx context.Context, userID, content string) (sova.Memory, error)
	Search(ctx context.Context, userID, query string, limit int) ([]sova.Memory, error)
}

// MemoryOptions tune the memory tools.
type MemoryOptions struct {
	// UserID owns the memories.
	UserID string
	// Results is the most memories a search returns (default 10, as
	// 000 §4.3's limit).
	Results int
	// Adds bounds the memories one run may add (default 5).
	Adds int
}

// MemoryItem is one memory in search_memories' result (000 §4.3).
type MemoryItem struct {
	ID        string  `json:"id"`
	Content   string  `json:"content"`
	Timestamp string  `json:"timestamp,omitempty"`
	Score     float64 `json:"score,omitempty"`
}

// MemoryResult is search_memories' output: {memories: [{id, content,
// timestamp, score}]}.
type MemoryResult struct {
	Query    string       `json:"query"`
	Memories []MemoryItem `json:"memories"`
	Provider string       `json:"provider"`
}

// AddMemoryResult is add_memory's output.
type AddMemoryResult struct {
	Success bool       `json:"success"`
	Memory  MemoryItem `json:"memory"`
}

// SearchMemoriesArgs are search_memories' arguments.
type SearchMemoriesArgs struct {
	Query string `json:"query" jsonschema:"what to look for in the person's memories: names, places, preferences, facts"`
}

// AddMemoryArgs are add_memory's arguments.
type AddMemoryArgs struct {
	Memory string `json:"memory" jsonschema:"the fact to remember, as one self-contained sentence in the person's words (e.g. 'Lives in Kazan; prefers answers in Russian')"`
}

func memoryItem(m sova.Memory) MemoryItem {
	it := MemoryItem{ID: m.ID, Content: m.Content, Score: m.Score}
	if !m.CreatedAt.IsZero() {
		it.Timestamp = m.CreatedAt.UTC().Format(time.RFC3339)
	}
	return it
}

// ErrMemoryNeedsAccount refuses memories to an anonymous visitor: such
// visitors are told apart only by their address, so memories kept for one
// would be read by everyone behind the same address (a NAT, an office).
var ErrMemoryNeedsAccount = errors.New("memories are kept only for people who sign in")

func memoriesAllowed(ctx context.Context, run *Run) error {
	if run.p.Memory == nil {
		return errors.New("memories are not available")
	}
	if u, ok := sova.UserFrom(ctx); !ok || u.Role == sova.RoleAnonymous {
		return ErrMemoryNeedsAccount
	}
	return nil
}

// SearchMemories is the search_memories tool: the person's memories that
// match a query, best first.
func SearchMemories(run *Run, o MemoryOptions) agent.Tool {
	if o.Results <= 0 {
		o.Results = 10
	}
	call := func(ctx context.Context, a SearchMemoriesArgs) (agent.Output, error) {
		if err := memoriesAllowed(ctx, run); err != nil {
			return agent.Output{}, err
		}
		q := strings.Join(strings.Fields(a.Query), " ")
		found, err := run.p.Memory.Search(ctx, o.UserID, q, o.Results)
		if err != nil {
			return agent.Output{}, fmt.Errorf("searching the memories: %w", err)
		}
		r := MemoryResult{Query: q, Memories: make([]MemoryItem, 0, len(found)), Provider: run.p.Memory.Name()}
		for _, m := range found {
			r.Memories = append(r.Memories, memoryItem(m))
		}
		summary := fmt.Sprintf("%d memories", len(r.Memories))
		if len(r.Memories) == 1 {
			summary = "1 memory"
		}
		return jsonOutput(r, summary)
	}
	return agent.NewTool(SearchMemoriesName, "Search what the person asked you to remember earlier (their memories): facts about them, preferences, plans. Returns the matching memories, best first.", call,
		agent.WithTitle(func(a SearchMemoriesArgs) string { return "Searching memories for “" + a.Query + "”" }))
}

// AddMemory is the add_memory tool: remembers a fact for the person.
func AddMemory(run *Run, o MemoryOptions) agent.Tool {
	if o.Adds <= 0 {
		o.Adds = 5
	}
	var adds counter
	call := func(ctx context.Context, a AddMemoryArgs) (agent.Output, error) {
		if err := memoriesAllowed(ctx, run); err != nil {
			return agent.Output{}, err
		}
		if _, ok := adds.take(o.Adds); !ok {
			return agent.Output{}, fmt.Errorf("at most %d memories can be added in one answer", o.Adds)
		}
		m, err := run.p.Memory.Add(ctx, o.UserID, a.Memory)
		if err != nil {
			return agent.Output{}, fmt.Errorf("saving the memory: %w", err)
		}
		return jsonOutput(AddMemoryResult{Success: true, Memory: memoryItem(m)}, "Remembered: "+m.Content)
	}
	return agent.NewTool(AddMemoryName, "Save something the person wants remembered for later conversations: one fact or preference per call.", call,
		agent.WithTitle(func(a AddMemoryArgs) string { return "Remembering “" + a.Memory + "”" }))
}
