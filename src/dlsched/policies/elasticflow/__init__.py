"""ElasticFlow: the Crius paper's ElasticFlow-LS (``ls``) and deadline-aware ElasticFlow (``deadline``)."""
