"""Adapters that put each kind of model behind the contract of a model under test
(`genprobe.under_test.sequences.SequenceModel`): a language model asked by prompts directly
(causal_lm.py, prompted.py); an integration model (seq2seq.py, sympy_cas.py, callable.py,
openai.py) behind the adapters' own `integration_model.Model`, which
`integration_tokens.IntegrationSequenceModel` puts behind `SequenceModel` for every study."""
