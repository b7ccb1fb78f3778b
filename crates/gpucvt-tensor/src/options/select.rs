//! Which tensors of a checkpoint are quantized when the user names none: the weights of
//! linear layers, as the serving stacks quantize them (ModelOpt, llm-compressor and vLLM
//! leave embeddings, the output head, norms, biases, routers and rotary tables in their
//! original precision; see docs/guide/quantizing.md).

/// Why a tensor is not a linear layer's weight, or `None` where it is one: a 2-d tensor
/// whose name's last part is `weight`, not an embedding, the output head, a norm, a rotary
/// table or a mixture-of-experts router.
///
/// The rule reads names as PyTorch modules spell them (`model.layers.0.mlp.up_proj.weight`):
/// a dot separates the parts, and the module is every part but the last.
///
/// ```
/// use gpucvt_tensor::options::not_a_linear_weight;
/// assert_eq!(not_a_linear_weight("model.layers.0.self_attn.q_proj.weight", &[4096, 4096]), None);
/// assert_eq!(not_a_linear_weight("lm_head.weight", &[32000, 4096]),
///            Some("the output head: the stacks keep it unquantized"));
/// assert_eq!(not_a_linear_weight("model.norm.weight", &[4096]),
///            Some("part of a norm: the stacks keep norms unquantized"));
/// assert_eq!(not_a_linear_weight("model.layers.0.mlp.up_proj.bias", &[11008]),
///            Some("a 1-d tensor (a bias or a scale), not a linear layer's weight"));
/// ```
pub fn not_a_linear_weight(name: &str, shape: &[u64]) -> Option<&'static str> {
    let parts: Vec<&str> = name.split('.').collect();
    let (last, module) = parts.split_last().unwrap_or((&"", &[]));
    let module_has = |test: &dyn Fn(&str) -> bool| module.iter().any(|p| test(p));
    if module_has(&|p| p.contains("rotary")) || last.ends_with("inv_freq") {
        return Some("a rotary table: the stacks keep it unquantized");
    }
    if module_has(&|p| p.contains("embed") || p == "wte" || p == "wpe") {
        return Some("an embedding: the stacks keep embeddings unquantized");
    }
    if module_has(&|p| p == "lm_head") || matches!(module, ["output"]) {
        return Some("the output head: the stacks keep it unquantized");
    }
    if module_has(&|p| p.contains("norm") || p.starts_with("ln_") || p == "ln") {
        return Some("part of a norm: the stacks keep norms unquantized");
    }
    if matches!(
        module.last(),
        Some(&"gate") | Some(&"router") | Some(&"routers")
    ) {
        return Some("a mixture-of-experts router: the stacks keep routers unquantized");
    }
    match shape.len() {
        0 => return Some("a 0-d tensor (a scalar), not a linear layer's weight"),
        1 => return Some("a 1-d tensor (a bias or a scale), not a linear layer's weight"),
        2 => {}
        _ => {
            return Some(
                "a tensor of more than two dimensions (a convolution, or experts stacked in \
                 one tensor), not a linear layer's weight",
            )
        }
    }
    if *last != "weight" {
        return Some("not a weight: its name does not end in \"weight\"");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::not_a_linear_weight as rule;

    #[test]
    fn linear_weights_of_common_models() {
        for name in [
            "model.layers.0.self_attn.q_proj.weight",
            "model.layers.31.mlp.down_proj.weight",
            "model.layers.3.mlp.gate_proj.weight",
            "model.layers.3.mlp.experts.7.gate_proj.weight",
            "transformer.h.0.attn.c_attn.weight",
            "transformer.h.0.mlp.dense_4h_to_h.weight",
            "encoder.layer.0.attention.output.dense.weight",
            "layers.0.attention.wq.weight",
            "weight",
        ] {
            assert_eq!(rule(name, &[64, 32]), None, "{name}");
        }
    }

    #[test]
    fn what_the_stacks_keep() {
        let kept = [
            ("model.embed_tokens.weight", vec![100, 32], "embedding"),
            ("transformer.wte.weight", vec![100, 32], "embedding"),
            ("vision.patch_embed.proj.weight", vec![100, 32], "embedding"),
            ("lm_head.weight", vec![100, 32], "output head"),
            ("output.weight", vec![100, 32], "output head"),
            ("embed_out.weight", vec![100, 32], "embedding"),
            (
                "model.layers.0.input_layernorm.weight",
                vec![32, 32],
                "norm",
            ),
            ("transformer.h.0.ln_1.weight", vec![32, 32], "norm"),
            ("model.layers.0.mlp.gate.weight", vec![8, 32], "router"),
            ("model.layers.0.mlp.router.weight", vec![8, 32], "router"),
            ("model.rotary_emb.inv_freq", vec![16], "rotary"),
            (
                "model.layers.0.self_attn.rotary_emb.cos_cached",
                vec![64, 32],
                "rotary",
            ),
            ("model.layers.0.mlp.up_proj.bias", vec![64], "1-d"),
            ("logit_scale", vec![], "0-d"),
            ("conv.weight", vec![8, 3, 3, 3], "more than two"),
            (
                "model.layers.0.mlp.experts.gate_up_proj",
                vec![8, 64, 32],
                "more than two",
            ),
            (
                "model.layers.0.mlp.down_proj.weight_scale_inv",
                vec![2, 2],
                "not a weight",
            ),
            ("position_ids", vec![1, 512], "not a weight"),
        ];
        for (name, shape, why) in kept {
            let r = rule(name, &shape).unwrap_or_else(|| panic!("{name} chosen"));
            assert!(r.contains(why), "{name}: {r}");
        }
    }
}
