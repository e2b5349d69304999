package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/flights"
)

// TrackFlightName is the web group's flight status tool (seed 000 §1.2).
const TrackFlightName = flights.ToolName

// TrackFlightArgs are track_flight's arguments.
type TrackFlightArgs struct {
	FlightNumber string `json:"flight_number" jsonschema:"the flight number with its airline code, such as BA283 (IATA) or BAW283 (ICAO)"`
}

// TrackFlightResult is track_flight's output: the flights with that
// number AviationStack knows of, the most recent first.
type TrackFlightResult struct {
	FlightNumber string           `json:"flightNumber"`
	Flights      []flights.Flight `json:"flights"`
	Source       string           `json:"source"`
}

// TrackFlight is the track_flight tool: a flight's status, times, delays,
// gates and, while it flies, its position (AviationStack).
func TrackFlight(run *Run) agent.Tool {
	call := func(ctx context.Context, a TrackFlightArgs) (agent.Output, error) {
		if run.p.Flights == nil {
			return agent.Output{}, errors.New("flight tracking is not available: it needs AVIATIONSTACK_API_KEY")
		}
		fs, err := run.p.Flights.Track(ctx, a.FlightNumber)
		if err != nil {
			return agent.Output{}, err
		}
		code, _, _ := flights.Normalize(a.FlightNumber)
		f := fs[0]
		summary := fmt.Sprintf("%s %s→%s: %s", strings.TrimSpace(f.IATA+" "+f.Airline.Name), f.Departure.IATA, f.Arrival.IATA, f.Status)
		return jsonOutput(TrackFlightResult{FlightNumber: code, Flights: fs, Source: "AviationStack"}, summary)
	}
	return agent.NewTool(TrackFlightName,
		"Track a flight by its number: status (scheduled, active, landed, cancelled, diverted), scheduled, estimated and actual times "+
			"with delays, terminals, gates, baggage belt, aircraft and, in the air, its position, altitude and speed.",
		call,
		agent.WithTitle(func(a TrackFlightArgs) string {
			return "Tracking flight " + strings.ToUpper(strings.TrimSpace(a.FlightNumber))
		}))
}
