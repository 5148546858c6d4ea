package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// step is one call of a scenario, in the SDK-neutral shape of run.py's summary.
type step map[string]any

// summary is what the client saw (see run.py's docstring for the contract).
type summary struct {
	sdk, version, scenario, binding string
	steps                           []step
	facts                           map[string]any
}

func newSummary(a clientArgs) *summary {
	return &summary{sdk: sdkName, version: sdkVersion(), scenario: a.scenario, binding: a.binding,
		facts: map[string]any{}}
}

// add records a call; events, state and texts are left out when nil or empty.
func (s *summary) add(call string, events []string, state string, extra step) step {
	entry := step{"call": call}
	if events != nil {
		entry["events"] = events
	}
	if state != "" {
		entry["state"] = state
	}
	for k, v := range extra {
		entry[k] = v
	}
	s.steps = append(s.steps, entry)
	return entry
}

func (s *summary) last() step { return s.steps[len(s.steps)-1] }

func stringsOf(v any) []string {
	out, _ := v.([]string)
	return out
}

// collect gathers every state and text seen, in order, as _common.Summary.as_dict does.
func (s *summary) collect() (states, texts, errs []string) {
	states, texts, errs = []string{}, []string{}, []string{}
	for _, st := range s.steps {
		for _, ev := range stringsOf(st["events"]) {
			kind, detail, _ := strings.Cut(ev, ":")
			if kind == "artifact" || kind == "message" {
				texts = append(texts, detail)
			} else if detail != "" {
				states = append(states, detail)
			}
		}
		if state, ok := st["state"].(string); ok && state != "" {
			states = append(states, state)
		}
		texts = append(texts, stringsOf(st["texts"])...)
		if e, ok := st["error"].(string); ok {
			errs = append(errs, e)
		}
	}
	return states, texts, errs
}

func (s *summary) asMap(ok bool, failure string) map[string]any {
	states, texts, errs := s.collect()
	steps := s.steps
	if steps == nil {
		steps = []step{}
	}
	out := map[string]any{
		"sdk": s.sdk, "sdk_version": s.version, "scenario": s.scenario, "binding": s.binding,
		"ok": ok, "steps": steps, "states": states, "texts": texts, "errors": errs,
	}
	for k, v := range s.facts {
		out[k] = v
	}
	if failure != "" {
		out["failure"] = failure
	}
	return out
}

func printJSON(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(fmt.Sprintf(`{"ok": false, "failure": %q}`, err.Error()))
	}
	fmt.Fprintln(os.Stdout, string(data))
}

// scenarioFailed: the SDK did something other than the scenario expects.
type scenarioFailed struct{ why string }

func (e *scenarioFailed) Error() string { return e.why }

func failf(format string, args ...any) error {
	return &scenarioFailed{why: fmt.Sprintf(format, args...)}
}

// skipped: the SDK cannot run this scenario; the message says why.
type skipped struct{ why string }

func (e *skipped) Error() string { return e.why }

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func shortState(raw string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(raw, "TASK_STATE_")), "_", "-")
}

func terminalOf(events []string) string {
	last := ""
	for _, ev := range events {
		kind, detail, _ := strings.Cut(ev, ":")
		if kind == "task" || kind == "status" {
			last = detail
		}
	}
	return last
}
