"""The ground every layer stands on: settings, errors and shared value types. It imports nothing else of ragpilot."""
