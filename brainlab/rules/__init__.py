"""Protocol compliance: the rule catalogue as data, its SQL views, `brainlab check` and formats.

The rules themselves are SQL views over the store (brainlab/store/models/rules/); this
package holds the catalogue (:mod:`brainlab.rules.catalogue`), runs a check on a brain
checkout (:mod:`brainlab.rules.check`) and prints the result as text, JSON or SARIF
(:mod:`brainlab.rules.formats`).
"""
