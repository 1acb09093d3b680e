"""The eval-set stage: what a set of judgements can support, from pools and merges to prediction-powered estimates."""
