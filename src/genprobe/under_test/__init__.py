"""Models under test: what a study asks (a network with its decoding method, a CAS, a Python
function, a language model by its prompts, an endpoint), named by spec strings (`registry`),
answering with ranked candidates (`sequences`), their settings (`settings`) and answer cache
(`cached`); `adapters` put each kind behind that contract."""
