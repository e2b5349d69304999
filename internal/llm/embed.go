package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// maxEmbedInputs is how many texts go into one /embeddings request; OpenAI
// accepts up to 2048, local servers often fewer.
const maxEmbedInputs = 256

// Embed returns one embedding per input, in input order, from the
// endpoint's OpenAI-compatible /embeddings with the client's default model
// (build a Client whose Model is the embedding model). Failed requests are
// retried like chat calls; token usage goes to the context's Meter.
func (c *Client) Embed(ctx context.Context, inputs []string) ([][]float64, error) {
	out := make([][]float64, 0, len(inputs))
	for start := 0; start < len(inputs); start += maxEmbedInputs {
		batch := inputs[start:min(len(inputs), start+maxEmbedInputs)]
		vecs, err := c.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (c *Client) embedBatch(ctx context.Context, inputs []string) ([][]float64, error) {
	k, model := c.core, c.model
	for i, s := range inputs {
		if s == "" {
			// The endpoint refuses empty strings; a space embeds as "nothing".
			inputs = append([]string(nil), inputs...)
			inputs[i] = " "
		}
	}
	params := embeddingRequest{Input: inputs, Model: model, EncodingFormat: "float"}
	for attempt := 0; ; attempt++ {
		vecs, usage, err := k.embedOnce(ctx, model, params, len(inputs))
		if err == nil {
			MeterFrom(ctx).Add(usage)
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embedding model %s: %w", model, err)
		}
		if !retryable(err) || attempt >= k.cfg.MaxRetries {
			err = finalError(model, attempt+1, err)
			k.logFailure(ctx, model, err)
			return nil, err
		}
		if serr := sleep(ctx, k.backoff(attempt, err)); serr != nil {
			return nil, fmt.Errorf("embedding model %s: stopped waiting to retry after %w: %w", model, err, serr)
		}
	}
}

func (k *core) embedOnce(ctx context.Context, model string, params embeddingRequest, n int) ([][]float64, Usage, error) {
	actx, cancel := context.WithTimeout(ctx, k.cfg.Timeout)
	defer cancel()
	var resp embeddingResponse
	res, err := k.send(actx, http.MethodPost, "embeddings", params, model, false)
	if err == nil {
		err = decode(res, &resp)
	}
	if err != nil {
		return nil, Usage{}, k.classify(ctx, actx, model, err)
	}
	if len(resp.Data) != n {
		return nil, Usage{}, &badResponseError{endpoint: k.endpoint,
			detail: fmt.Sprintf("%d embeddings for %d inputs", len(resp.Data), n)}
	}
	vecs := make([][]float64, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n || vecs[d.Index] != nil {
			return nil, Usage{}, &badResponseError{endpoint: k.endpoint, detail: fmt.Sprintf("embedding index %d out of place", d.Index)}
		}
		if len(d.Embedding) == 0 {
			return nil, Usage{}, &badResponseError{endpoint: k.endpoint, detail: "empty embedding", err: errors.New("no vector")}
		}
		vecs[d.Index] = d.Embedding
	}
	usage := Usage{PromptTokens: resp.Usage.PromptTokens, TotalTokens: resp.Usage.TotalTokens}
	if usage.TotalTokens == 0 {
		usage.TotalTokens = usage.PromptTokens
	}
	return vecs, usage, nil
}
