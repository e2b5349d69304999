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
	// Personal groups answer from what the person told Sova, not from
	// sources: no citation rules in the prompt.
	Personal bool
}

// Groups is the table of search groups (seed 000 §1.2). chat and
// extreme are elsewhere.
var Groups = []Spec{
	{
		ID:          "web",
		Description: "Web search agent: searches the web with 3–5 queries at once, reads pages you link, translates, and answers with citations.",
		Tools: []string{tools.WebSearchName, tools.CodeInterpreterName, tools.GetWeatherDataName, tools.RetrieveName, tools.TextTranslateName,
			tools.NearbyPlacesSearchName, tools.TrackFlightName, tools.MovieOrTVSearchName, tools.DatetimeName},
		Working: "Searching the web",
		Instructions: "You are Sova, a web search assistant.\n\n" +
			"- Search with web_search, giving 3 to 5 queries that approach the question from different sides; use the news topic for recent events.\n" +
			"- Use retrieve to read pages whose URL the person gives, or a page whose full text the answer needs.\n" +
			"- Use text_translate when the person asks for a translation, and datetime for the current date or time.\n" +
			"- Use get_weather_data for the weather, nearby_places_search for places near somewhere, track_flight for a flight's status " +
			"and movie_or_tv_search for a film or series; their results are shown to the person as cards, so answer with what matters.\n" +
			"- For small talk that needs no facts, answer without tools.\n" +
			"- Write a well-structured answer: the direct answer first, then the details, with headings or lists where they help.",
	},
	{
		ID:          "academic",
		Description: "Academic search agent: finds scholarly papers (OpenAlex and arXiv, or Exa) and answers from their abstracts with citations.",
		Tools:       []string{tools.AcademicSearchName, tools.CodeInterpreterName, tools.DatetimeName},
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
	{
		ID:          "stocks",
		Description: "Stocks agent: charts the prices of stocks, ETFs and indices (Yahoo Finance) and converts currencies at the latest reference rates.",
		Tools:       []string{tools.StockChartName, tools.CurrencyConverterName, tools.DatetimeName},
		Working:     "Getting market data",
		Instructions: "You are Sova, a financial markets assistant.\n\n" +
			"- Chart prices with stock_chart: Yahoo Finance tickers (AAPL, 7203.T for Tokyo, SAP.DE, ^GSPC for the S&P 500), several at once to compare, and a range that fits the question.\n" +
			"- Convert amounts with currency_converter; say the rates' date.\n" +
			"- Give the latest price, the change over the range and what stands out; the chart is shown to the person, so describe it rather than listing every point.\n" +
			"- Prices may be delayed, and nothing you say is investment advice: say so when the person asks what to buy or sell.",
	},
	{
		ID:          "crypto",
		Description: "Crypto agent: prices, market data and candlestick charts of cryptocurrencies and tokens from CoinGecko.",
		Tools:       []string{tools.CoinDataName, tools.CoinOHLCName, tools.CoinDataByContractName, tools.DatetimeName},
		Working:     "Getting crypto data",
		Instructions: "You are Sova, a cryptocurrency market assistant.\n\n" +
			"- Use coin_data with the CoinGecko id (bitcoin, ethereum, solana; not the ticker) for price, market cap, volume and changes.\n" +
			"- Use coin_ohlc for the price history over a period; the candlestick chart is shown to the person, so describe the trend.\n" +
			"- Given a token's contract address, use coin_data_by_contract with its chain (ethereum, binance-smart-chain, polygon-pos, solana, …).\n" +
			"- Crypto prices move fast and nothing you say is investment advice: say so when the person asks what to buy or sell.",
	},
	{
		ID:          "memory",
		Description: "Memory agent: remembers what you ask it to and recalls it later (built in, or Supermemory with SUPERMEMORY_API_KEY).",
		Tools:       []string{tools.SearchMemoriesName, tools.AddMemoryName, tools.DatetimeName},
		Working:     "Checking memories",
		Personal:    true,
		Instructions: "You are Sova, a personal assistant with a memory of what the person told you to remember (seed 000 §4.3).\n\n" +
			"- When the person asks you to remember, note or save something, call add_memory with one self-contained fact per call, in their words.\n" +
			"- When the question is about the person, their preferences, plans or anything they may have told you before, call search_memories first " +
			"(with the key words of what they ask about) and answer from the memories found.\n" +
			"- Say plainly when nothing was found rather than guessing; never invent memories.\n" +
			"- Confirm briefly what you saved. Memories are private to this person.",
	},
	{
		ID:          "connectors",
		Description: "Connectors agent: searches the spaces you keep in sync with a folder or a WebDAV (Nextcloud) share, and answers with citations.",
		Tools:       []string{tools.ConnectorsSearchName, tools.DatetimeName},
		Working:     "Searching connected sources",
		Instructions: "You are Sova, an assistant that answers from the person's connected sources: folders and WebDAV (Nextcloud) shares kept in sync with their document spaces.\n\n" +
			"- Search with connectors_search using precise terms from the question; call it again in the same step with other wording or for another part of the question if useful.\n" +
			"- Answer only from the passages found, naming the documents; say when the sources do not cover the question.",
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
	tools.CodeInterpreterName: func(b *build) agent.Tool {
		return tools.CodeInterpreter(b.cfg.Providers.Sandbox, tools.CodeOptions{})
	},
	tools.GetWeatherDataName: func(b *build) agent.Tool {
		return tools.GetWeatherData(b.run, tools.WeatherOptions{Language: b.language.Code})
	},
	tools.NearbyPlacesSearchName: func(b *build) agent.Tool {
		return tools.NearbyPlacesSearch(b.run, tools.PlacesOptions{Language: b.language.Code})
	},
	tools.StockChartName: func(b *build) agent.Tool {
		return tools.StockChartTool(b.run, tools.StockChartOptions{Cite: b.cite})
	},
	tools.CurrencyConverterName: func(b *build) agent.Tool { return tools.CurrencyConverter(b.run) },
	tools.CoinDataName: func(b *build) agent.Tool {
		return tools.CoinData(b.run, tools.CoinOptions{Cite: b.cite})
	},
	tools.CoinOHLCName: func(b *build) agent.Tool {
		return tools.CoinOHLC(b.run, tools.CoinOptions{Cite: b.cite})
	},
	tools.CoinDataByContractName: func(b *build) agent.Tool {
		return tools.CoinDataByContract(b.run, tools.CoinOptions{Cite: b.cite})
	},
	tools.SearchMemoriesName: func(b *build) agent.Tool {
		return tools.SearchMemories(b.run, tools.MemoryOptions{UserID: b.in.UserID})
	},
	tools.AddMemoryName: func(b *build) agent.Tool {
		return tools.AddMemory(b.run, tools.MemoryOptions{UserID: b.in.UserID})
	},
	tools.ConnectorsSearchName: func(b *build) agent.Tool {
		return tools.ConnectorsSearch(b.run, tools.ConnectorsSearchOptions{UserID: b.in.UserID, Cite: b.cite})
	},
	tools.TrackFlightName: func(b *build) agent.Tool { return tools.TrackFlight(b.run) },
	tools.MovieOrTVSearchName: func(b *build) agent.Tool {
		return tools.MovieOrTVSearch(b.run, tools.MovieOptions{Cite: b.cite, Language: b.language.Code})
	},
	tools.XSearchName: func(b *build) agent.Tool {
		return tools.XSearch(b.run, tools.XSearchOptions{Cite: b.cite, Now: b.cfg.Now})
	},
}
