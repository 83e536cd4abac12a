"""The system under audit: backends, prompt, parser, generation cache and the Subject."""
