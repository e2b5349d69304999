// Package tools is the one tool set Sova's agents share: web_search,
// retrieve (named scrape_url where deep_research's prompts say so),
// search_documents and code_interpreter, each an agent.Tool built from the
// providers (the search chain, the page reader, the document spaces, the
// code sandbox) and options (result counts, per-run call budgets,
// reformulation limits, the name). What a run's tools find — the results
// seen, the pages read and their numbers, the charts drawn — lives in a Run
// or a CodeFiles the mode creates for the run, never in package state.
package tools
