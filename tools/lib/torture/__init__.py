"""The torture test's scenarios, one module each, and what they share (`common`)."""
