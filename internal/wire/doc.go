// Package wire encodes a run's events (internal/event) into the formats
// clients read: the AI SDK UI message stream v1 (UIStream), OpenAI
// chat.completion.chunk streams and completions (ChunkStream, Completion),
// NDJSON, and the terminal's progress lines (Terminal), with their shared
// Server-Sent Events framing. Every encoder implements Encoder; SinkOf
// adapts one to an event.Sink.
package wire
