package search

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/provider/tavily"
)

// Image is an image found for a query (seed 000 §3.1's images: {url,
// description}), with the page it is on.
type Image struct {
	URL         string // the image
	Thumbnail   string // a smaller copy, when the provider has one
	Description string // its title or description
	Source      string // the page it is on, when known
}

// ImageSearcher is a provider that searches images too: SearXNG (the
// images category) and Tavily (include_images). Chain and Throttled pass
// it through.
type ImageSearcher interface {
	SearchImages(ctx context.Context, q Query) ([]Image, error)
}

// ErrNoImageSearch is returned by a Chain none of whose providers
// searches images.
var ErrNoImageSearch = errors.New("search: no provider searches images")

// SearchImages runs q on the images of the first provider that searches
// them and answers; providers that do not are skipped.
func (c *Chain) SearchImages(ctx context.Context, q Query) ([]Image, error) {
	var errs []error
	for _, p := range c.Providers {
		is, ok := p.(ImageSearcher)
		if !ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		imgs, err := is.SearchImages(ctx, q)
		if err == nil {
			return imgs, nil
		}
		if errors.Is(err, ErrNoImageSearch) { // a wrapper of a provider without images
			continue
		}
		if c.Logger != nil {
			c.Logger.WarnContext(ctx, "image search failed", "provider", p.Name(), "err", errtext.Detail(err))
		}
		errs = append(errs, named(p.Name(), err))
	}
	if len(errs) == 0 {
		return nil, ErrNoImageSearch
	}
	return nil, &ChainError{Errs: errs}
}

// SearchImages runs q on the throttled provider's images, under the same
// limits as its searches; ErrNoImageSearch when it has none.
func (t *Throttled) SearchImages(ctx context.Context, q Query) ([]Image, error) {
	is, ok := t.p.(ImageSearcher)
	if !ok {
		return nil, ErrNoImageSearch
	}
	release, err := t.wait(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return is.SearchImages(ctx, q)
}

// SearchImages runs q on the instance's images category: results with
// img_src, thumbnail_src, the page's url and a title.
func (s *SearXNG) SearchImages(ctx context.Context, q Query) ([]Image, error) {
	if err := q.validate(); err != nil {
		return nil, &Error{Provider: s.Name(), Message: "invalid query", Err: err}
	}
	endpoint, err := s.endpoint(q)
	if err != nil {
		return nil, err
	}
	endpoint = strings.Replace(endpoint, "categories=general", "categories=images", 1)
	body, err := s.api.Get(ctx, endpoint, searxngHeader(q))
	if err != nil {
		return nil, err
	}
	var resp struct {
		Results []struct {
			URL          flexString `json:"url"`
			Title        flexString `json:"title"`
			Content      flexString `json:"content"`
			ImgSrc       flexString `json:"img_src"`
			ThumbnailSrc flexString `json:"thumbnail_src"`
			Thumbnail    flexString `json:"thumbnail"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &Error{Provider: s.Name(), Message: fmt.Sprintf("the images answer is not valid JSON; it starts with %q",
			errtext.Scrub(snippet(body), s.base)), Addr: s.base, Err: err}
	}
	var out []Image
	for _, r := range resp.Results {
		if len(out) == q.maxResults() {
			break
		}
		src := absoluteProtocol(strings.TrimSpace(string(r.ImgSrc)))
		if !httpURL(src) {
			continue
		}
		thumb := absoluteProtocol(strings.TrimSpace(cmp.Or(string(r.ThumbnailSrc), string(r.Thumbnail))))
		if !httpURL(thumb) {
			thumb = ""
		}
		out = append(out, Image{URL: src, Thumbnail: thumb, Description: strings.TrimSpace(cmp.Or(string(r.Title), string(r.Content))),
			Source: strings.TrimSpace(string(r.URL))})
	}
	return out, nil
}

// SearchImages asks Tavily for the query's images with their
// descriptions (include_images, include_image_descriptions): a basic
// search of one result, whose images are the answer.
func (t *Tavily) SearchImages(ctx context.Context, q Query) ([]Image, error) {
	if err := q.validate(); err != nil {
		return nil, &Error{Provider: t.Name(), Message: "invalid query", Err: err}
	}
	resp, err := t.client.Search(ctx, tavily.Request{
		Query: q.Text, MaxResults: 1, SearchDepth: "basic",
		IncludeImages: true, IncludeImageDescriptions: true,
	})
	if err != nil {
		return nil, err
	}
	var out []Image
	for _, img := range resp.Images {
		if len(out) == q.maxResults() {
			break
		}
		if u := strings.TrimSpace(img.URL); httpURL(u) {
			out = append(out, Image{URL: u, Description: strings.TrimSpace(img.Description)})
		}
	}
	return out, nil
}

// httpURL reports whether s is an absolute http(s) URL.
func httpURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}
