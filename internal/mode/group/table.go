package group

import (
	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/tools"
)

// Spec is one search group: a list of tools and instructions (seed 000
// §1.2).
type Spec struct {
	ID          string
	Description string
	// Tools names the group's tools in the order they are offered, as the
	// seed lists them. A name this build has no builder for (below) is
	// skipped without a word: that is how tools that other parts of Sova
	// provide plug in — add the builder, and the groups that list the
	// name offer it.
	Tools []string
	// Instructions open the system prompt.
	Instructions string
	// Working is the status shown while the agent works.
	Working string
}

// Names of the tools the table lists that this package builds no tool for
// yet. Each is a hook: when its tool exists, a builder below makes the
// groups that list it offer it.
const (
	// CodeInterpreter is the Python sandbox (internal/tools/code.go, DESIGN
	// §9): add `CodeInterpreter: func(b *build) agent.Tool { return
	// tools.CodeInterpreter(b.run, …) }` to builders and a case to
	// tools.Providers.Status.
	CodeInterpreter    = "code_interpreter"
	GetWeatherData     = "get_weather_data"     // internal/weather (Open-Meteo, OpenWeather)
	NearbyPlacesSearch = "nearby_places_search" // internal/places (Nominatim + Overpass, Google Places)
	TrackFlight        = "track_flight"         // AviationStack (AVIATIONSTACK_API_KEY)
	MovieOrTVSearch    = "movie_or_tv_search"   // TMDB (TMDB_API_KEY)
)

// Groups is the table of search groups (seed 000 §1.2). chat, extreme,
// stocks, crypto, memory and connectors are elsewhere or later.
var Groups = []Spec{
	{
		ID:          "web",
		Description: "Web search agent: searches the web with 3–5 queries at once, reads pages you link, translates, and answers with citations.",
		Tools: []string{tools.WebSearchName, CodeInterpreter, GetWeatherData, tools.RetrieveName, tools.TextTranslateName,
			NearbyPlacesSearch, TrackFlight, MovieOrTVSearch, tools.DatetimeName},
		Working: "Searching the web",
		Instructions: "You are Sova, a web search assistant.\n\n" +
			"- Search with web_search, giving 3 to 5 queries that approach the question from different sides; use the news topic for recent events.\n" +
			"- Use retrieve to read pages whose URL the person gives, or a page whose full text the answer needs.\n" +
			"- Use text_translate when the person asks for a translation, and datetime for the current date or time.\n" +
			"- For small talk that needs no facts, answer without tools.\n" +
			"- Write a well-structured answer: the direct answer first, then the details, with headings or lists where they help.",
	},
	{
		ID:          "academic",
		Description: "Academic search agent: finds scholarly papers (OpenAlex and arXiv, or Exa) and answers from their abstracts with citations.",
		Tools:       []string{tools.AcademicSearchName, CodeInterpreter, tools.DatetimeName},
		Working:     "Searching papers",
		Instructions: "You are Sova, an academic research assistant.\n\n" +
			"- Search scholarly papers with academic_search: 1 to 5 precise queries using the field's terms (in English for most fields).\n" +
			"- Answer from the papers found: what they show, with authors and years; compare methods and results; say where evidence is thin or conflicting.\n" +
			"- Prefer recent and well-cited work, and say when a result is a preprint.",
	},
	{
		ID:          "youtube",
		Description: "YouTube search agent: finds videos, reads their transcripts and answers with timestamped links to the moments.",
		Tools:       []string{tools.YouTubeSearchName, tools.DatetimeName},
		Working:     "Searching YouTube",
		Instructions: "You are Sova, a video research assistant.\n\n" +
			"- Find videos with youtube_search (one query, as a person would type it into YouTube).\n" +
			"- Answer from the transcripts and descriptions: say what each relevant video covers and where. " +
			"Give moments as Markdown links to the moment, like [12:05](https://www.youtube.com/watch?v=ID&t=725s), and cite each video's number.\n" +
			"- Say when a video has no transcript and you judged it by its title and description only.",
	},
	{
		ID:          "reddit",
		Description: "Reddit search agent: searches posts and discussions over a time range and summarises what people say, with citations.",
		Tools:       []string{tools.RedditSearchName, tools.DatetimeName},
		Working:     "Searching Reddit",
		Instructions: "You are Sova, an assistant that reads Reddit discussions.\n\n" +
			"- Search with reddit_search: 1 to 5 queries, each with a time range (week by default; month, year or all for lasting topics). " +
			"Name a subreddit as r/name when the question belongs to one; give a post URL to read that post and its comments.\n" +
			"- Summarise what people say: the main opinions, where they agree and disagree, and experiences worth noting. " +
			"Make clear these are opinions of Reddit users, not verified facts.",
	},
	{
		ID:          "code",
		Description: "Code search agent: looks up documentation and code examples, official documentation first, and answers with code.",
		Tools:       []string{tools.CodeContextName},
		Working:     "Looking up documentation",
		Instructions: "You are Sova, a programming assistant.\n\n" +
			"- Look up documentation and code examples with code_context: one precise query naming the language, the library and, if known, the version.\n" +
			"- Prefer official documentation over blog posts; say when an API differs between versions.\n" +
			"- Give working code in fenced blocks with the language named, and cite the results the APIs and behaviour you state come from.",
	},
	{
		ID:          "x",
		Description: "X (Twitter) search agent: searches recent posts through xAI and summarises them with links (needs XAI_API_KEY).",
		Tools:       []string{tools.XSearchName},
		Working:     "Searching X",
		Instructions: "You are Sova, an assistant that follows discussions on X (Twitter).\n\n" +
			"- Search posts with x_search: 1 to 5 queries; restrict the dates or the authors when the question does.\n" +
			"- Report what people post, naming them by @handle, and cite the posts' numbers. Make clear posts are opinions, not verified facts.",
	},
}

// builders make the tools a group may list, for one run.
var builders = map[string]func(b *build) agent.Tool{
	tools.WebSearchName: func(b *build) agent.Tool {
		return tools.MultiWebSearch(b.run, tools.MultiWebSearchOptions{Cite: b.cite, Language: b.language.Code, BlockList: b.cfg.BlockList})
	},
	tools.RetrieveName: func(b *build) agent.Tool {
		return tools.Retrieve(b.run, tools.RetrieveOptions{Cite: b.cite, BlockList: b.cfg.BlockList})
	},
	tools.TextTranslateName: func(b *build) agent.Tool { return tools.TextTranslate(b.run) },
	tools.DatetimeName: func(b *build) agent.Tool {
		return tools.Datetime(tools.DatetimeOptions{Timezone: b.in.Timezone, Now: b.cfg.Now})
	},
	tools.AcademicSearchName: func(b *build) agent.Tool {
		return tools.AcademicSearch(b.run, tools.AcademicOptions{Cite: b.cite})
	},
	tools.YouTubeSearchName: func(b *build) agent.Tool {
		return tools.YouTubeSearch(b.run, tools.YouTubeOptions{Cite: b.cite, Language: b.language.Code})
	},
	tools.RedditSearchName: func(b *build) agent.Tool {
		return tools.RedditSearch(b.run, tools.RedditOptions{Cite: b.cite})
	},
	tools.CodeContextName: func(b *build) agent.Tool {
		return tools.CodeContext(b.run, tools.CodeContextOptions{Cite: b.cite, BlockList: b.cfg.BlockList})
	},
	tools.XSearchName: func(b *build) agent.Tool {
		return tools.XSearch(b.run, tools.XSearchOptions{Cite: b.cite, Now: b.cfg.Now})
	},
}
