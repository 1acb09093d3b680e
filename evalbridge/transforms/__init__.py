"""Run transforms: new runs made from runs (fusion), evaluated and compared like any run evalbridge reads."""
